"""``pd.optimizer``: optimizers (methods.py) over one base (base.py: backward, clipping,
decay, update ops), learning-rate schedulers (``pd.optimizer.lr``), gradient clipping
(clip.py) and weight decay (regularizer.py), as ``paddle.optimizer`` arranges them."""
from . import lr
from .base import Optimizer
from .clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from .methods import (SGD, Adagrad, AdagradOptimizer, Adam, AdamOptimizer, AdamW,
                      AdamWOptimizer, Lamb, LambOptimizer, Momentum, MomentumOptimizer,
                      RMSProp, RMSPropOptimizer, SGDOptimizer)
from .regularizer import L1Decay, L2Decay

__all__ = ["SGD", "Momentum", "Adam", "AdamW", "Lamb", "Adagrad", "RMSProp", "Optimizer", "lr",
           "ClipGradByValue", "ClipGradByNorm", "ClipGradByGlobalNorm", "L1Decay", "L2Decay",
           "SGDOptimizer", "MomentumOptimizer", "AdamOptimizer", "AdamWOptimizer",
           "LambOptimizer", "AdagradOptimizer", "RMSPropOptimizer"]
