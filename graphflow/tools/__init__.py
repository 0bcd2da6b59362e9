"""Tools for people: the `graphflow` command line (`cli`) and graph pictures and summaries (`viz`)."""
