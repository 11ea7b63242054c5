"""Backend: models through datamodel-code-generator, and Jinja templates over views of the IR."""
