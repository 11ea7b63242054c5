"""Authoring: typed tools, resources and prompts for server authors (the top layer of the server runtime).

``App`` collects functions declared with ``@app.tool``, ``@app.resource(uri)`` and
``@app.prompt`` and serves them through a generated handler base; ``signatures`` turns their
annotations into JSON Schemas and validators, ``surface`` reads the module the generator
writes from them, ``specs`` serves schema-first tools (their models derive from
``spec_model.SpecModel``). See ``app`` for the behaviour.
"""

from ..services import Context, Elicitation, InputError, InputRequired, Root, Sampled
from .app import App, AppHandlers, ResourceNotFound, ToolError
from .declarations import Prompt, Resource, Tool
from .media import Audio, File, Image
from .signatures import ArgumentsError, DeclarationError, OutputError
from .specs import ToolSpec

__all__ = [
    "App",
    "AppHandlers",
    "ArgumentsError",
    "Audio",
    "Context",
    "DeclarationError",
    "Elicitation",
    "File",
    "Image",
    "InputError",
    "InputRequired",
    "OutputError",
    "Prompt",
    "Resource",
    "ResourceNotFound",
    "Root",
    "Sampled",
    "Tool",
    "ToolError",
    "ToolSpec",
]
