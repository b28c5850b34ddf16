"""The torch.nn modules the trial worker builds layers with, where torch has no single module for the op as the IR
states it. Imported by torch_worker.py (which checks that torch imports first), never run alone."""
import torch
import torch.nn as nn


class Fn(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *xs):
        return self.f(*xs)


class RNNWrap(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]


class RMSNorm(nn.Module):
    """An RMSNorm run as the plan prices it. eager: transformers' Python ops on an fp32 copy (LlamaRMSNorm). Otherwise
    torch's own nn.RMSNorm where this torch has one (>= 2.4), else the same ops, as torch's first rms_norm composed them."""

    def __init__(self, shape, affine, eager):
        super().__init__()
        self.dims = tuple(range(-len(shape), 0))
        self.eps = 1e-6
        native = None if eager else getattr(nn, "RMSNorm", None)
        self.native = native(tuple(shape), eps=self.eps, elementwise_affine=affine) if native else None
        self.weight = nn.Parameter(torch.ones(tuple(shape))) if affine and self.native is None else None

    def forward(self, x):
        if self.native is not None:
            return self.native(x)
        x32 = x.float()
        y = (x32 * torch.rsqrt(x32.pow(2).mean(self.dims, keepdim=True) + self.eps)).type_as(x)
        return self.weight * y if self.weight is not None else y


class MHA(nn.Module):
    def __init__(self, a, embed, heads):
        super().__init__()
        self.m = nn.MultiheadAttention(embed, heads, bias=a.get("bias", True) is not False, batch_first=True,
                                       kdim=a.get("kdim"), vdim=a.get("vdim"))
        self.causal = bool(a.get("causal"))
        # As the call did: need_weights=True (the default, and Keras' explicit attention) takes the eager path.
        self.need_weights = a.get("needWeights") is not False

    def forward(self, q, k=None, v=None):
        k = q if k is None else k
        v = k if v is None else v
        mask = None
        if self.causal:
            n = q.shape[1]
            mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=q.device), 1)
        return self.m(q, k, v, attn_mask=mask, need_weights=self.need_weights)[0]
