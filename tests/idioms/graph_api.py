"""torch.autograd.graph and grad_fn objects: Node docstrings, saved-tensor hooks (and their
tutorial, intermediate_source/autograd_saved_tensors_hooks_tutorial.py), multi-grad hooks."""

from __future__ import annotations

from ._registry import idiom, printed, val


@idiom("PyTorch autograd.graph.Node.name docstring: b = a.clone(); b.grad_fn.name()")
def graph_node_name(torch):
    a = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.clone()
    return {"name": b.grad_fn.name(), "is_node": isinstance(b.grad_fn, torch.autograd.graph.Node)}


@idiom("PyTorch autograd.graph.Node.register_hook docstring: gO[0] * 2, then handle.remove()")
def graph_node_register_hook(torch):
    a = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.clone()
    handle = b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
    b.sum().backward(retain_graph=True)
    first = val(a.grad)
    handle.remove()
    a.grad = None
    b.sum().backward(retain_graph=True)
    return {"with_hook": first, "removed": val(a.grad)}


@idiom("PyTorch autograd.graph.Node.register_prehook docstring: gI[0] * 2 before the node runs")
def graph_node_register_prehook(torch):
    a = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.clone()
    handle = b.grad_fn.register_prehook(lambda gI: (gI[0] * 2,))
    b.sum().backward(retain_graph=True)
    first = val(a.grad)
    handle.remove()
    a.grad = None
    b.sum().backward(retain_graph=True)
    return {"with_hook": first, "removed": val(a.grad)}


@idiom("PyTorch autograd.graph.Node.metadata docstring: a dict stored on the node")
def graph_node_metadata(torch):
    a = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.clone()
    empty = dict(b.grad_fn.metadata)
    b.grad_fn.metadata["tag"] = "clone"
    return {"empty": empty, "after": dict(b.grad_fn.metadata)}


@idiom("PyTorch tutorials and blog posts: walking grad_fn.next_functions back to AccumulateGrad")
def graph_walk_next_functions(torch):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor([3.0, 4.0])
    loss = ((w * x + b) ** 2).sum()
    names = []
    frontier = [loss.grad_fn]
    while frontier:
        node = frontier.pop(0)
        names.append(node.name())
        for child, _ in node.next_functions:
            if child is not None:
                frontier.append(child)
    add = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    return {"names": names, "variable_is_b": add.next_functions[1][0].variable is b}


@idiom("PyTorch autograd.graph.saved_tensors_hooks docstring: printing pack and unpack hooks")
def graph_saved_tensors_hooks_print(torch):
    def pack_hook(t):
        print("saved:", t)
        return t

    def unpack_hook(t):
        print("used:", t)
        return t

    def run():
        u = torch.tensor([0.5, 1.5, 2.5], requires_grad=True)
        v = torch.tensor([3.0, 1.0, -1.0], requires_grad=True) * 3
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            w = u * v
        w.sum().backward()

    return {"printed": printed(run)}


@idiom("PyTorch saved tensors hooks tutorial: pack x * 4 and unpack x / 4 keep the gradient")
def graph_saved_tensors_hooks_scale(torch):
    x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 4, lambda x: x / 4):
        y = torch.pow(x, 2)
    y.sum().backward()
    return {"equal": x.grad.equal(2 * x)}


@idiom("PyTorch saved tensors hooks tutorial: pack returns an index into a Python list")
def graph_saved_tensors_hooks_storage(torch):
    storage = []

    def pack(x):
        storage.append(x)
        return len(storage) - 1

    def unpack(x):
        return storage[x]

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * x
    y.sum().backward()
    return {"stored": len(storage), "equal": x.grad.equal(2 * x)}


@idiom("PyTorch autograd.graph.save_on_cpu docstring: f(a, b, c) with a save_on_cpu block")
def graph_save_on_cpu(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([5.0, 6.0], requires_grad=True)

    def f(a, b, c):
        prod_1 = a * b
        with torch.autograd.graph.save_on_cpu():
            prod_2 = prod_1 * c
        return prod_2 * a

    f(a, b, c).sum().backward()
    return {"grads": [val(a.grad), val(b.grad), val(c.grad)]}


@idiom("PyTorch autograd.graph.register_multi_grad_hook docstring: which grads were computed")
def graph_register_multi_grad_hook(torch):
    calls = []
    a = torch.linspace(0.1, 0.6, 6).reshape(2, 3).requires_grad_()
    b = torch.linspace(1.0, 2.0, 6).reshape(2, 3).requires_grad_()
    c = a * b
    d = a * b

    def fn(grads):
        calls.append([g is not None for g in grads])

    torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    return {"calls": calls}


@idiom("PyTorch saved tensors hooks tutorial: y.grad_fn._saved_self is a, _saved_other is b")
def graph_saved_self_other(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    y = a * b
    return {
        "self": y.grad_fn._saved_self is a,
        "other": y.grad_fn._saved_other is b,
        "printed": printed(lambda: print(y.grad_fn._saved_self)),
    }


@idiom("PyTorch autograd.graph.allow_mutation_on_saved_tensors docstring: mutate after saving")
def graph_allow_mutation_on_saved_tensors(torch):
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        out.backward()
        grad = val(a.grad)
    return {"grad": grad}
