"""Building training data as the papers did, through OpenAI-compatible endpoints (`aesenv data`).
`web`: AesCoder's instruction-and-page pipeline (`aesenv.data.web`)."""
