"""A server's tool surface: snapshots, JSON Schema -> Python types, and breaking-change classification.

``snapshot`` takes and stores what a server offers (tools, prompts, resource templates);
``schema_types`` turns tool schemas into Python types and models; ``surface`` compares two
surfaces and classifies each change as breaking or compatible (shared by ``client --check``
and the server-side ``check``); ``names`` and ``pysource`` make every server-provided
string enter generated code as a checked identifier or a Python literal.
"""
