from mcp_schema_codegen.commands.cli import main

raise SystemExit(main())
