"""The file format: the `.gfz` container (`file_io`), the versioned JSON graph (`graph_format`,
`graph_encoder`, `graph_decoder`), `save`/`load` (`serialization`) and variable checkpoints
(`checkpoint`). Files are untrusted input: nothing here executes code from a file."""
