"""The file formats. graphflow's own: the `.gfz` container (`file_io`), the versioned JSON graph
(`graph_format`, `graph_encoder`, `graph_decoder`), `save`/`load` (`serialization`) and variable
checkpoints (`checkpoint`). Other systems': TFRecord files (`tfrecord`), TensorBoard's `Summary`
encodings (`summary_encoding`) and Chrome traces of traced runs (`timeline`), leaves that the
kernels and the engine may use. Files are untrusted input: nothing here executes code from a file."""
