"""`tf.DeviceSpec` and the parsing of device strings ('/job:ps/task:0/device:GPU:1', '/gpu:0', 'cpu').

graphflow runs one process, so job, replica and task are parsed, kept on the DeviceSpec and merged as
TF1 does, but placement only uses the device part: `canonical_device` reduces any spec to '/cpu:N',
'/gpu:N' or '' (no device requested).
"""

import re

_FIELDS = ("job", "replica", "task", "device_type", "device_index")
_DEVICE = re.compile(r"(?:device:)?([A-Za-z_]+):(\d+|\*)")


class DeviceSpec:
    """TF1's `tf.DeviceSpec(job, replica, task, device_type, device_index)`: a (partial) device
    specification. Mutable as TF1's (`merge_from`, `parse_from_string`); `replace` and
    `make_merged_spec` return new ones. Compares equal by value."""

    __slots__ = _FIELDS

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = None if job is None else str(job)
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = _device_type(device_type)
        self.device_index = None if device_index is None else int(device_index)

    @classmethod
    def from_string(cls, spec):
        """Parse '/job:ps/replica:0/task:1/device:GPU:0' (any part optional; '/gpu:0', 'cpu:1', '*'
        indices). Unknown parts raise ValueError."""
        return cls().parse_from_string(spec)

    def parse_from_string(self, spec):
        """Set the fields named in `spec` (TF1: in place; returns self)."""
        for part in (spec or "").split("/"):
            if not part:
                continue
            key, sep, value = part.partition(":")
            key_lower = key.lower()
            if key_lower in ("job", "replica", "task") and sep:
                if key_lower == "job":
                    self.job = value
                elif value != "*":
                    setattr(self, key_lower, _int(value, part, spec))
                continue
            m = _DEVICE.fullmatch(part)
            if m is not None and (part.lower().startswith("device:")
                                  or m.group(1).lower() in ("cpu", "gpu", "cuda")):
                self.device_type = _device_type(m.group(1))
                self.device_index = None if m.group(2) == "*" else int(m.group(2))
            elif sep == "" and key_lower in ("cpu", "gpu", "cuda"):
                self.device_type = _device_type(key)
            else:
                raise ValueError(f"Unknown attribute '{key}' is encountered while parsing the device "
                                 f"spec: '{spec}'.")
        return self

    def to_string(self):
        out = ""
        if self.job is not None:
            out += f"/job:{self.job}"
        if self.replica is not None:
            out += f"/replica:{self.replica}"
        if self.task is not None:
            out += f"/task:{self.task}"
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out += f"/device:{self.device_type}:{index}"
        return out

    def merge_from(self, dev):
        """Overwrite this spec's fields with the ones `dev` (a DeviceSpec or string) sets (TF1)."""
        dev = dev if isinstance(dev, DeviceSpec) else DeviceSpec.from_string(dev)
        for name in _FIELDS:
            value = getattr(dev, name)
            if value is not None:
                setattr(self, name, value)

    def make_merged_spec(self, dev):
        merged = self.replace()
        merged.merge_from(dev)
        return merged

    def replace(self, **kwargs):
        """A copy with the given fields replaced."""
        fields = {name: getattr(self, name) for name in _FIELDS}
        for name in kwargs:
            if name not in fields:
                raise TypeError(f"DeviceSpec has no field '{name}'")
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"DeviceSpec('{self.to_string()}')"


def _int(value, part, spec):
    if not value.isdigit():
        raise ValueError(f"'{part}' in the device spec '{spec}' needs a number")
    return int(value)


def _device_type(value):
    if value is None:
        return None
    upper = str(value).upper()
    return "GPU" if upper == "CUDA" else upper


def canonical_device(spec):
    """The device graphflow places on: '/gpu:0', '/device:GPU:0', 'gpu', '/job:w/task:0/cpu:1',
    a DeviceSpec -> '/gpu:0', '/gpu:0', '/gpu:0', '/cpu:1'; None/'' or no device part -> ''."""
    if not spec:
        return ""
    try:
        parsed = spec if isinstance(spec, DeviceSpec) else DeviceSpec.from_string(spec.strip())
    except (ValueError, AttributeError):
        parsed = None
    if parsed is not None and parsed.device_type is None:
        return ""
    if parsed is None or parsed.device_type not in ("CPU", "GPU"):
        raise ValueError(f"Unknown device specification '{spec}'; use '/cpu:0' or '/gpu:0'")
    return f"/{parsed.device_type.lower()}:{parsed.device_index or 0}"


__all__ = ["DeviceSpec"]
