"""The embedded default: a local model served by llama.cpp, used when nothing else is configured."""
