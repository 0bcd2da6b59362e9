"""`tf.estimator.RunConfig`: where and how often an Estimator saves, logs and seeds."""

_DEFAULT = object()


class RunConfig:
    """`RunConfig(model_dir=None, tf_random_seed=None, save_summary_steps=100,
    save_checkpoints_steps=None, save_checkpoints_secs=600 (when no steps are given),
    session_config=None, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
    log_step_count_steps=100)`. `replace(**changes)` returns a modified copy."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_DEFAULT, save_checkpoints_secs=_DEFAULT,
                 session_config=None, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, train_distribute=None, device_fn=None, protocol=None,
                 eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200):
        if save_checkpoints_steps is not _DEFAULT and save_checkpoints_secs is not _DEFAULT \
                and save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("save_checkpoints_steps and save_checkpoints_secs cannot be both set.")
        if save_checkpoints_steps is _DEFAULT:
            save_checkpoints_steps = None
            if save_checkpoints_secs is _DEFAULT:
                save_checkpoints_secs = 600
        if save_checkpoints_secs is _DEFAULT:
            save_checkpoints_secs = None
        if train_distribute is not None or eval_distribute is not None:
            raise NotImplementedError("RunConfig: distribution strategies are not provided by "
                                      "graphflow (single process)")
        self.model_dir = model_dir
        self.tf_random_seed = tf_random_seed
        self.save_summary_steps = save_summary_steps
        self.save_checkpoints_steps = save_checkpoints_steps
        self.save_checkpoints_secs = save_checkpoints_secs
        self.session_config = session_config
        self.keep_checkpoint_max = keep_checkpoint_max
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.log_step_count_steps = log_step_count_steps
        self.device_fn = device_fn
        self.is_chief = True
        self.num_worker_replicas = 1
        self.num_ps_replicas = 0
        self.task_type = "worker"
        self.task_id = 0

    def replace(self, **changes):
        fields = ["model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                  "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
                  "keep_checkpoint_every_n_hours", "log_step_count_steps", "device_fn"]
        unknown = set(changes) - set(fields)
        if unknown:
            raise ValueError(f"Replacing {sorted(unknown)} is not supported")
        values = {f: getattr(self, f) for f in fields}
        values.update(changes)
        if "save_checkpoints_steps" in changes and "save_checkpoints_secs" not in changes:
            values["save_checkpoints_secs"] = None if changes["save_checkpoints_steps"] else 600
        if "save_checkpoints_secs" in changes and "save_checkpoints_steps" not in changes:
            values["save_checkpoints_steps"] = None
        return RunConfig(**values)
