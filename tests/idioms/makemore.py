"""karpathy/nn-zero-to-hero makemore lectures (part 1 bigrams, part 2 MLP, part 3 batchnorm,
part 4 backprop ninja): the tensor and autograd code, on a tiny fixed word list."""

from __future__ import annotations

from ._registry import idiom, val

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia"]


def _vocab():
    chars = sorted(set("".join(WORDS)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    return stoi, len(stoi)


def _bigrams():
    stoi, V = _vocab()
    xs, ys = [], []
    for w in WORDS:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:], strict=False):
            xs.append(stoi[ch1])
            ys.append(stoi[ch2])
    return xs, ys, V


@idiom("makemore part 1: N = zeros((27, 27), dtype=int32); N[ix1, ix2] += 1 counting loop")
def makemore_bigram_counts(torch):
    xs, ys, V = _bigrams()
    N = torch.zeros((V, V), dtype=torch.int32)
    for ix1, ix2 in zip(xs, ys, strict=True):
        N[ix1, ix2] += 1
    return {"row0": N[0].tolist(), "total": N.sum().item(), "dtype": str(N.dtype)}


@idiom(
    "makemore part 1: P = (N + 1).float(); P /= P.sum(1, keepdims=True); nll by log of P[ix1, ix2]"
)
def makemore_bigram_probabilities(torch):
    xs, ys, V = _bigrams()
    N = torch.zeros((V, V), dtype=torch.int32)
    for ix1, ix2 in zip(xs, ys, strict=True):
        N[ix1, ix2] += 1
    P = (N + 1).double()
    P /= P.sum(1, keepdims=True)
    log_likelihood = 0.0
    n = 0
    for ix1, ix2 in zip(xs, ys, strict=True):
        prob = P[ix1, ix2]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
    nll = -log_likelihood
    return {"nll": repr(nll), "avg": (nll / n).item()}


@idiom(
    "makemore part 1: g = torch.Generator().manual_seed(2147483647); multinomial(..., generator=g)"
)
def makemore_generator_sampling(torch):
    p = torch.tensor([0.1, 0.0, 0.6, 0.3])
    g = torch.Generator().manual_seed(2147483647)
    first = torch.multinomial(p, num_samples=20, replacement=True, generator=g)
    g = torch.Generator().manual_seed(2147483647)
    again = torch.multinomial(p, num_samples=20, replacement=True, generator=g)
    return {
        "reproducible": bool((first == again).all()),
        "never_zero_prob": bool((first != 1).all()),
        "ix_type": type(first[0].item()).__name__,
    }


@idiom("makemore part 1: torch.randn((27, 27), generator=g, requires_grad=True)")
def makemore_randn_generator(torch):
    g = torch.Generator().manual_seed(2147483647)
    W = torch.randn((27, 27), generator=g, requires_grad=True)
    g2 = torch.Generator().manual_seed(2147483647)
    W2 = torch.randn((27, 27), generator=g2)
    return {"shape": list(W.shape), "rg": W.requires_grad, "same": bool((W == W2).all())}


@idiom(
    "makemore part 1: xenc = F.one_hot(xs, num_classes=27).float() for the neural bigram", nn=True
)
def makemore_one_hot(torch):
    F = torch.nn.functional

    xs = torch.tensor([0, 5, 13, 13, 1])
    xenc = F.one_hot(xs, num_classes=27).float()
    return {"shape": list(xenc.shape), "dtype": str(xenc.dtype), "row": val(xenc[1])}


@idiom(
    "makemore part 1: neural bigram, probs[torch.arange(num), ys].log().mean(); "
    "W.data += -lr * W.grad"
)
def makemore_neural_bigram_data_update(torch):
    xs, ys, V = _bigrams()
    xs = torch.tensor(xs)
    ys = torch.tensor(ys)
    num = xs.nelement()
    W = (torch.arange(V * V * 1.0).reshape(V, V) % 5 - 2) / 10
    W.requires_grad = True
    xenc = (xs.unsqueeze(1) == torch.arange(V)).double()
    losses = []
    for _ in range(10):
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
        losses.append(loss.item())
        W.grad = None
        loss.backward()
        W.data += -50 * W.grad
    return {"losses": losses, "W00": W[0, 0].item(), "printed_row": repr(W[0, :3])}


@idiom("makemore part 2: emb = C[X]; emb.view(-1, 6) @ W1; torch.cat(torch.unbind(emb, 1), 1)")
def makemore_mlp_embedding(torch):
    V, block = 10, 3
    C = torch.linspace(-1.0, 1.0, V * 2).reshape(V, 2)
    X = torch.tensor([[0, 0, 5], [0, 5, 9], [5, 9, 1], [9, 1, 0]])
    emb = C[X]
    a = emb.view(-1, block * 2)
    b = torch.cat(torch.unbind(emb, 1), 1)
    c = torch.cat([emb[:, 0, :], emb[:, 1, :], emb[:, 2, :]], 1)
    return {"shape": list(emb.shape), "view": val(a), "same": [val(a == b), val(a == c)]}


@idiom(
    "makemore part 2: parameters list, sum(p.nelement() for p in parameters), "
    "p.requires_grad = True"
)
def makemore_mlp_training(torch):
    V, block, H = 10, 3, 8
    C = torch.linspace(-1.0, 1.0, V * 2).reshape(V, 2)
    W1 = torch.sin(torch.arange(block * 2 * H * 1.0)).reshape(block * 2, H) / 2
    b1 = torch.zeros(H)
    W2 = torch.cos(torch.arange(H * V * 1.0)).reshape(H, V) / 3
    b2 = torch.zeros(V)
    parameters = [C, W1, b1, W2, b2]
    count = sum(p.nelement() for p in parameters)
    for p in parameters:
        p.requires_grad = True
    X = torch.tensor([[0, 0, 5], [0, 5, 9], [5, 9, 1], [9, 1, 0], [0, 0, 2]])
    Y = torch.tensor([9, 1, 0, 3, 4])
    losses = []
    lre = torch.linspace(-3, 0, 10)
    lrs = 10**lre
    for i in range(10):
        emb = C[X]
        h = torch.tanh(emb.view(-1, block * 2) @ W1 + b1)
        logits = h @ W2 + b2
        counts = logits.exp()
        prob = counts / counts.sum(1, keepdims=True)
        loss = -prob[torch.arange(5), Y].log().mean()
        losses.append(loss.item())
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = lrs[i]
        for p in parameters:
            p.data += -lr * p.grad
    return {"count": count, "losses": losses}


@idiom("makemore part 2: F.cross_entropy(logits, Y) instead of the hand-written loss", nn=True)
def makemore_cross_entropy(torch):
    F = torch.nn.functional

    logits = torch.tensor([[2.0, 1.0, -1.0], [0.5, 0.5, 3.0]], requires_grad=True)
    Y = torch.tensor([0, 2])
    loss = F.cross_entropy(logits, Y)
    loss.backward()
    return {"loss": loss.item(), "grad": val(logits.grad)}


@idiom("makemore part 2: ix = torch.randint(0, X.shape[0], (32,)) minibatch indices")
def makemore_randint_minibatch(torch):
    X = torch.arange(100.0).reshape(50, 2)
    ix = torch.randint(0, X.shape[0], (32,))
    batch = X[ix]
    return {
        "shape": list(batch.shape),
        "in_range": bool(((ix >= 0) & (ix < 50)).all()),
        "dtype": str(ix.dtype),
    }


@idiom(
    "makemore part 3: hpreact.mean(0, keepdim=True), .std(0, keepdim=True), "
    "running stats in no_grad"
)
def makemore_batchnorm_by_hand(torch):
    hpreact = torch.sin(torch.arange(24.0)).reshape(6, 4)
    bngain = torch.ones((1, 4), requires_grad=True)
    bnbias = torch.zeros((1, 4), requires_grad=True)
    bnmean_running = torch.zeros((1, 4))
    bnstd_running = torch.ones((1, 4))
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    out = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    (out**3).sum().backward()
    return {
        "running": [val(bnmean_running), val(bnstd_running)],
        "gain_grad": val(bngain.grad),
        "bias_grad": val(bnbias.grad),
    }


@idiom("makemore part 3: @torch.no_grad() def split_loss(split) evaluation helper")
def makemore_no_grad_decorated_eval(torch):
    W = torch.tensor([[0.5, -0.5], [1.0, 2.0]], requires_grad=True)
    data = {"train": torch.tensor([[1.0, 2.0]]), "val": torch.tensor([[3.0, -1.0]])}

    @torch.no_grad()
    def split_loss(split):
        out = (data[split] @ W).tanh().sum()
        return out.item(), out.requires_grad

    return {"train": split_loss("train"), "val": split_loss("val")}


@idiom("makemore part 3: update-to-data ratio ((lr*p.grad).std() / p.data.std()).log10().item()")
def makemore_update_ratio(torch):
    p = torch.linspace(-1.0, 1.0, 12).reshape(3, 4).requires_grad_()
    (p.sin() * p).sum().backward()
    lr = 0.1
    ratio = ((lr * p.grad).std() / p.data.std()).log10().item()
    saturated = (p.abs() > 0.97).float().mean() * 100
    return {"ratio": ratio, "saturated": saturated.item()}


@idiom("makemore part 3: layer.out.retain_grad() on every layer output, then histogram of grads")
def makemore_retain_grad_layers(torch):
    x = torch.linspace(-1.0, 1.0, 8).reshape(2, 4)
    W = torch.linspace(0.1, 1.6, 16).reshape(4, 4).requires_grad_()
    outs = []
    h = x
    for _ in range(3):
        h = torch.tanh(h @ W)
        h.retain_grad()
        outs.append(h)
    h.sum().backward()
    means = [o.grad.mean().item() for o in outs]
    stds = [o.grad.std().item() for o in outs]
    hy, hx = torch.histogram(outs[0].grad, bins=4, density=True)
    return {"means": means, "stds": stds, "hist": val(hy), "edges": val(hx)}


@idiom("makemore part 4: cmp(s, dt, t) with torch.all(dt == t.grad), torch.allclose, abs().max()")
def makemore_backprop_cmp(torch):
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], requires_grad=True)
    Yb = torch.tensor([1, 2])
    n = 2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum**-1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes]:
        t.retain_grad()
    loss.backward()
    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs

    def cmp(dt, t):
        ex = torch.all(dt == t.grad).item()
        app = torch.allclose(dt, t.grad)
        maxdiff = (dt - t.grad).abs().max().item()
        return [ex, app, maxdiff]

    return {"logprobs": cmp(dlogprobs, logprobs), "probs": cmp(dprobs, probs)[1:]}


@idiom(
    "makemore part 4: dlogits = F.softmax(logits, 1); dlogits[range(n), Yb] -= 1; dlogits /= n",
    nn=True,
)
def makemore_softmax_backward_by_hand(torch):
    F = torch.nn.functional

    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], requires_grad=True)
    Yb = torch.tensor([1, 2])
    n = 2
    F.cross_entropy(logits, Yb).backward()
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    return {"close": torch.allclose(dlogits, logits.grad), "dlogits": val(dlogits)}


@idiom("makemore part 4: logits.max(1).indices and a one-hot mask built from it for dlogit_maxes")
def makemore_max_indices(torch):
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]])
    result = logits.max(1)
    onehot = torch.zeros_like(logits)
    onehot[range(2), result.indices] = 1.0
    return {"values": val(result.values), "indices": val(result.indices), "onehot": val(onehot)}


@idiom("makemore part 4: dC[ix] += demb[k, j] accumulation loop over Xb.shape")
def makemore_embedding_grad_loop(torch):
    C = torch.linspace(-1.0, 1.0, 10).reshape(5, 2).requires_grad_()
    Xb = torch.tensor([[0, 1, 1], [4, 0, 2]])
    emb = C[Xb]
    (emb * torch.arange(12.0).reshape(2, 3, 2)).sum().backward()
    demb = torch.arange(12.0).reshape(2, 3, 2)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            ix = Xb[k, j]
            dC[ix] += demb[k, j]
    return {"dC": val(dC), "exact": bool(torch.all(dC == C.grad))}


@idiom("makemore part 4: bnvar = 1/(n-1)*(bndiff2).sum(0, keepdim=True); (bnvar + 1e-5)**-0.5")
def makemore_bessel_variance(torch):
    h = torch.sin(torch.arange(12.0)).reshape(4, 3).requires_grad_()
    n = h.shape[0]
    bnmeani = 1 / n * h.sum(0, keepdim=True)
    bndiff = h - bnmeani
    bndiff2 = bndiff**2
    bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    (bnraw**2 * torch.arange(12.0).reshape(4, 3)).sum().backward()
    return {
        "var_matches": torch.allclose(bnvar, h.var(0, keepdim=True, unbiased=True)),
        "grad": val(h.grad),
    }
