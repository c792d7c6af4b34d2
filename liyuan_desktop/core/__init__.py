"""The engine: no Qt here. Runs on any asyncio loop (qasync in the app, plain asyncio in tests and the CLI)."""
