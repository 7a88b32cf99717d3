"""The MCP server front door (`thatch mcp`): the memory store as tools for
coding agents. Like cli/, it only checks arguments, calls ops/ and shapes
the answer; the SDK is imported only when the server runs.

    tool     what a tool is (name, schema, argument checks) and a server's session
    tools    the tools: names, schemas, the ops each one calls
    rules    the original's eight learned-rule tools (prediction_*, behavior_*)
    views    what a model reads from each tool (the structured content), from its --json document
    render   the text of each result, from its view
    results  capping a result to a character budget, honestly
    server   argument checks, a Context per call, the SDK server over stdio
    handshake  the host's opening messages answered while the SDK imports
    transport  stdio lines checked before the SDK sees them (malformed JSON, lone surrogates, size)
"""
