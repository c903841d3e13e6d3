"""The OpenAI-compatible chat client every model aesenv talks to goes through: VLM judges, the
web agent, the checklist and the chat policies (`aesenv.llm.client`)."""
