"""mcp-codegen: typed Python models and protocol tables generated from the MCP JSON Schemas."""

__version__ = "0.2.0"
