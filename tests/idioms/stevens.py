"""Stevens, Antiga & Viehmann, "Deep Learning with PyTorch" (deep-learning-with-pytorch/dlwpt-code),
chapter 5: fitting the thermometer model, by hand, with autograd and with optimizers."""

from __future__ import annotations

from ._registry import idiom, val

T_C = [0.5, 14.0, 15.0, 28.0, 11.0, 8.0, 3.0, -4.0, 6.0, 13.0, 21.0]
T_U = [35.7, 55.9, 58.2, 81.9, 56.3, 48.9, 33.9, 21.8, 48.4, 60.4, 68.4]


def _data(torch):
    return torch.tensor(T_C), torch.tensor(T_U)


def model(t_u, w, b):
    return w * t_u + b


def loss_fn(t_p, t_c):
    squared_diffs = (t_p - t_c) ** 2
    return squared_diffs.mean()


@idiom("dlwpt-code p1ch5 1_parameter_estimation: analytic grad_fn with torch.stack of sums")
def stevens_manual_gradient(torch):
    t_c, t_u = _data(torch)

    def grad_fn(t_u, t_c, t_p, w, b):
        dloss_dtp = 2 * (t_p - t_c) / t_p.size(0)
        dloss_dw = dloss_dtp * t_u
        dloss_db = dloss_dtp * 1.0
        return torch.stack([dloss_dw.sum(), dloss_db.sum()])

    params = torch.tensor([1.0, 0.0])
    t_un = 0.1 * t_u
    losses = []
    for _ in range(100):
        w, b = params
        t_p = model(t_un, w, b)
        losses.append(float(loss_fn(t_p, t_c)))
        params = params - 1e-2 * grad_fn(t_un, t_c, t_p, w, b)
    return {"losses": losses[::10], "params": val(params)}


@idiom("dlwpt-code p1ch5 2_autograd: params.grad is None, loss.backward(), model(t_u, *params)")
def stevens_autograd_first_backward(torch):
    t_c, t_u = _data(torch)
    params = torch.tensor([1.0, 0.0], requires_grad=True)
    before = params.grad is None
    loss = loss_fn(model(t_u, *params), t_c)
    loss.backward()
    return {"before": before, "grad": val(params.grad)}


@idiom("dlwpt-code p1ch5 2_autograd: training_loop with params.grad.zero_() and no_grad update")
def stevens_autograd_training_loop(torch):
    t_c, t_u = _data(torch)
    t_un = 0.1 * t_u

    def training_loop(n_epochs, learning_rate, params, t_u, t_c):
        log = []
        for epoch in range(1, n_epochs + 1):
            if params.grad is not None:
                params.grad.zero_()
            loss = loss_fn(model(t_u, *params), t_c)
            loss.backward()
            with torch.no_grad():
                params -= learning_rate * params.grad
            if epoch % 500 == 0:
                log.append("Epoch %d, Loss %f" % (epoch, float(loss)))  # noqa: UP031 (the book's)
        return params, log

    params, log = training_loop(2000, 1e-2, torch.tensor([1.0, 0.0], requires_grad=True), t_un, t_c)
    return {"params": val(params), "log": log}


@idiom("dlwpt-code p1ch5 3_optimizers: optim.SGD([params], lr=1e-2), zero_grad/backward/step")
def stevens_sgd_optimizer(torch):
    t_c, t_u = _data(torch)
    t_un = 0.1 * t_u
    params = torch.tensor([1.0, 0.0], requires_grad=True)
    optimizer = torch.optim.SGD([params], lr=1e-2)
    for _ in range(500):
        loss = loss_fn(model(t_un, *params), t_c)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"params": val(params), "loss": loss.item()}


@idiom("dlwpt-code p1ch5 3_optimizers: optim.Adam([params], lr=1e-1) on the unnormalised input")
def stevens_adam_optimizer(torch):
    t_c, t_u = _data(torch)
    params = torch.tensor([1.0, 0.0], requires_grad=True)
    optimizer = torch.optim.Adam([params], lr=1e-1)
    for _ in range(300):
        loss = loss_fn(model(t_u, *params), t_c)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"params": val(params), "loss": loss.item()}


@idiom("dlwpt-code p1ch5 3_optimizers: dir(optim) lists the optimizers the book names")
def stevens_optim_names(torch):
    names = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]
    return {"present": [hasattr(torch.optim, n) for n in names]}


@idiom("dlwpt-code p1ch5 3_optimizers: train/val split; val loss under torch.no_grad()")
def stevens_train_val_split(torch):
    t_c, t_u = _data(torch)
    t_un = 0.1 * t_u
    shuffled_indices = torch.tensor([3, 7, 0, 9, 5, 1, 10, 2, 8, 6, 4])
    train_indices = shuffled_indices[:-2]
    val_indices = shuffled_indices[-2:]
    params = torch.tensor([1.0, 0.0], requires_grad=True)
    optimizer = torch.optim.SGD([params], lr=1e-2)
    log = []
    for epoch in range(1, 301):
        train_loss = loss_fn(model(t_un[train_indices], *params), t_c[train_indices])
        with torch.no_grad():
            val_loss = loss_fn(model(t_un[val_indices], *params), t_c[val_indices])
            assert val_loss.requires_grad is False
        optimizer.zero_grad()
        train_loss.backward()
        optimizer.step()
        if epoch % 100 == 0:
            log.append(
                f"Epoch {epoch}, Training loss {train_loss.item():.4f},"
                f" Validation loss {val_loss.item():.4f}"
            )
    return {"log": log}


@idiom("dlwpt-code p1ch5 3_optimizers: calc_forward with torch.set_grad_enabled(is_train)")
def stevens_set_grad_enabled_is_train(torch):
    t_c, t_u = _data(torch)
    params = torch.tensor([0.5, 1.0], requires_grad=True)

    def calc_forward(t_u, t_c, is_train):
        with torch.set_grad_enabled(is_train):
            t_p = model(t_u, *params)
            loss = loss_fn(t_p, t_c)
        return loss

    return {
        "train": calc_forward(t_u, t_c, True).requires_grad,
        "val": calc_forward(t_u, t_c, False).requires_grad,
    }
