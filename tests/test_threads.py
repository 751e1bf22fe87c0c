"""Grad mode is per thread, as PyTorch's: one thread's no_grad does not stop another
thread's recording, and overlapping blocks in several threads leave every thread's mode
as it was."""

from __future__ import annotations

import threading

import agrad


def test_no_grad_in_one_thread_does_not_reach_another():
    inside = threading.Event()
    release = threading.Event()
    seen = {}

    def quiet():
        with agrad.no_grad():
            inside.set()
            release.wait(5)
            seen["quiet"] = agrad.is_grad_enabled()

    worker = threading.Thread(target=quiet)
    worker.start()
    assert inside.wait(5)
    x = agrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()  # recorded here while the other thread is inside no_grad
    release.set()
    worker.join(5)
    assert agrad.is_grad_enabled()
    assert y.grad_fn is not None
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert seen["quiet"] is False


def test_a_new_thread_starts_with_grad_enabled_whatever_the_caller_set():
    seen = {}

    def probe():
        x = agrad.tensor(1.0, requires_grad=True)
        seen["enabled"] = agrad.is_grad_enabled()
        seen["recorded"] = (x * 2).grad_fn is not None

    with agrad.no_grad():
        worker = threading.Thread(target=probe)
        worker.start()
        worker.join(5)
    assert seen == {"enabled": True, "recorded": True}


def test_overlapping_blocks_in_many_threads_restore_every_mode():
    barrier = threading.Barrier(8)
    results = []

    def body(i):
        barrier.wait(5)  # all eight threads enter their blocks together
        for _ in range(50):
            with agrad.set_grad_enabled(i % 2 == 0):
                x = agrad.tensor(1.0, requires_grad=True)
                results.append(((x * 3).grad_fn is not None) == (i % 2 == 0))
        results.append(agrad.is_grad_enabled())

    threads = [threading.Thread(target=body, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(results) == 8 * 51 and all(results)
    assert agrad.is_grad_enabled()
