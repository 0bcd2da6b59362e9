"""The engine: symbolic differentiation, device placement, plan compilation and the Session that runs
plans (`gradients`, `placement`, `executor`, `session`, `config`)."""
