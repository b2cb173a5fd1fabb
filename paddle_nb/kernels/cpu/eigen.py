"""Eigendecompositions on the host's LAPACK (ops/eig.py, ops/eigh.py say what the ops
are): eig and eigvals (geev), eigh and eigvalsh (syevd), and the gradients of the last
two. One function per op of host arrays and attributes, which the op's kernel calls (and
puts the results on its place) and a compiled block calls through ``*_in_python``
(linalg.py says why).

eigh's gradients are with respect to a symmetric X, as Paddle's are (ops/eigh.py has
the formulas).
"""
from __future__ import annotations

import numpy as np

from . import linalg as L
from .in_python import in_python, like, several

COMPLEX_OF = {"float32": np.complex64, "float64": np.complex128}


# --- eig and eigvals ------------------------------------------------------------------------
def _solved(x, op_type: str, vectors: bool):
    a = L.host_matrices(x, op_type, square=True)
    if a.shape[-1] == 0:                 # numpy's LAPACK call refuses empty matrices
        return np.zeros(a.shape[:-1], np.complex128), a.astype(np.complex128)
    if vectors:
        return np.linalg.eig(a)
    return np.linalg.eigvals(a), None


def _complex(value, x):
    return L.result(value, COMPLEX_OF[np.dtype(x.dtype).name])


def eig_arrays(x):
    """(Eigenvalues, Eigenvectors), complex."""
    w, v = _solved(x, "eig", vectors=True)
    return _complex(w, x), _complex(v, x)


def eigvals_arrays(x):
    return _complex(_solved(x, "eigvals", vectors=False)[0], x)


# --- eigh and eigvalsh, and their gradients ---------------------------------------------
def eigh_arrays(x, uplo, op_type):
    """(Eigenvalues, Eigenvectors) in X's dtype, reading the triangle ``uplo`` names."""
    a = L.host_matrices(x, op_type, square=True)
    if a.shape[-1] == 0:                 # numpy's LAPACK call refuses empty matrices
        w, v = np.zeros(a.shape[:-1]), a
    else:
        w, v = np.linalg.eigh(a, UPLO=uplo)
    return L.result(w, x.dtype), L.result(v, x.dtype)


def _vectors(vectors, op_type: str) -> np.ndarray:
    v = L.host_value(vectors)
    if v.ndim < 2 or v.shape[-1] != v.shape[-2]:
        raise ValueError(f"{op_type}: slot Eigenvectors: expected a batch of square "
                         f"matrices, given shape {list(v.shape)}")
    return v


def _scaled_back(v, middle):
    """V middle V^T."""
    return v @ middle @ L.transpose(v)


def eigvalsh_grad_arrays(vectors, dw):
    """X@GRAD of eigvalsh (dw: None where no gradient was written)."""
    v = _vectors(vectors, "eigvalsh_grad")
    dw = L.host_gradient(dw, "eigvalsh_grad", "Eigenvalues@GRAD", np.empty(v.shape[:-1]))
    dx = (v * dw[..., None, :]) @ L.transpose(v)               # V diag(dW) V^T
    return L.result(dx, vectors.dtype)


def eigh_grad_arrays(values, vectors, dw, dv):
    """X@GRAD of eigh (dw, dv: None where no gradient was written)."""
    v = _vectors(vectors, "eigh_grad")
    w = L.host_value(values)
    if w.shape != v.shape[:-1]:
        raise ValueError(f"eigh_grad: slot Eigenvalues: expected one per eigenvector, "
                         f"shape {list(v.shape[:-1])}; given {list(w.shape)}")
    dw = L.host_gradient(dw, "eigh_grad", "Eigenvalues@GRAD", w)
    dv = L.host_gradient(dv, "eigh_grad", "Eigenvectors@GRAD", v)
    n = w.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = w[..., None, :] - w[..., :, None]               # w_j - w_i
        gap[..., np.arange(n), np.arange(n)] = np.inf          # F's diagonal: 0
        middle = (L.transpose(v) @ dv) / gap
    middle[..., np.arange(n), np.arange(n)] += dw
    dx = _scaled_back(v, middle)
    dx = (dx + L.transpose(dx)) / 2
    return L.result(dx, vectors.dtype)


def eigh_grad_some_arrays(values, vectors, dw, dv, came):
    """eigh_grad from numba code (every gradient slot read: ``came`` says which were)."""
    return eigh_grad_arrays(values, vectors, *L.written((dw, dv), came))


# --- from numba code --------------------------------------------------------------------
eig_in_python = in_python(eig_arrays, several(L.complex_array(0, -1), L.complex_array(0)))
eigvals_in_python = in_python(eigvals_arrays, L.complex_array(0, -1))
eigh_in_python = in_python(eigh_arrays, several(like(0, -1), like(0)))
eigvalsh_grad_in_python = in_python(eigvalsh_grad_arrays, like(0))
eigh_grad_in_python = in_python(eigh_grad_some_arrays, like(1))
