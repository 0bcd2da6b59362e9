"""graphflow/kernels/variable_store.py: a session's variable values; a run's writes are pending
until it commits, locked runs take their locks at their first variable access."""

import threading

import numpy as np
import pytest

from graphflow.framework.errors import UninitializedVariableError
from graphflow.kernels import SessionState
from graphflow.kernels.variable_store import DeviceVariableStore, LockedWrites, VariableStore


def test_writes_of_a_run_are_kept_only_when_it_commits():
    store = VariableStore()
    store.write("w", [1.0, 2.0])
    assert not store.read("w").flags.writeable
    store.begin()
    store.write("w", np.zeros(2))
    np.testing.assert_array_equal(store.read("w"), [0.0, 0.0])  # the run sees its own write
    store.abort()
    np.testing.assert_array_equal(store.read("w"), [1.0, 2.0])
    store.begin()
    store.write("w", np.zeros(2))
    store.commit()
    np.testing.assert_array_equal(store.read("w"), [0.0, 0.0])
    with pytest.raises(UninitializedVariableError):
        store.read("v")


def test_a_locked_run_takes_its_locks_at_its_first_variable_access():
    store = VariableStore()
    store.write("w", [1.0])
    lock = store.variable_lock("w")
    pending = store.begin([lock])
    assert type(pending) is LockedWrites and not lock.locked()
    store.read("w")
    assert lock.locked()
    store.commit()
    pending.release()
    assert not lock.locked()


def test_the_device_store_reads_device_values_through_the_host():
    class Backend:
        def is_device_array(self, value):
            return isinstance(value, list)

        def to_host(self, value):
            return np.array(value)

        def to_device(self, value):
            return list(value)

        def active(self):
            return threading.Lock()

    store, backend = DeviceVariableStore(), Backend()
    store.register(backend)
    store.write("w", np.array([1.0, 2.0]))
    assert store.read_device("w", backend) == [1.0, 2.0]
    assert store.values["w"] == [1.0, 2.0]  # kept on the device from now on
    np.testing.assert_array_equal(store.read("w"), [1.0, 2.0])
    np.testing.assert_array_equal(store.host_values()["w"], [1.0, 2.0])
    assert isinstance(SessionState().variables, VariableStore)
