"""Context builders: gather the text a model sees (windows, neighbours, exclusions)."""
