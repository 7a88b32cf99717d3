"""Tests of thatch_cli/mcp (named mcp_server: a tests/mcp package would shadow the SDK's `mcp`)."""
