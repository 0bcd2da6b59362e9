"""The engine: device placement, plan compilation and the Session that runs plans (`placement`,
`executor`, `session`)."""
