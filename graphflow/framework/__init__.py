"""Floor 1-2, the graph data model: dtypes, static shapes, errors, Graph/Operation/Tensor and scopes,
and the session configuration (`config`).

Nothing here runs a graph; everything above builds on these types.
"""
