"""``compat.torch.optim``: ``Optimizer``, ``SGD``, the Adam family, ``Adadelta``,
``Adafactor``, ``Adagrad``, ``RMSprop``, ``ASGD``, ``Rprop``, ``LBFGS``, ``Muon``, ``SparseAdam``
(which refuses dense gradients), ``swap_in_optimizer_params_and_state``,
``lr_scheduler`` and ``swa_utils``.

Each group's step is, where the compat core allows, one compiled funcgrad
program over all its parameters (``fused=False`` selects the per-tensor path).

Example:
    >>> import compat.torch as torch
    >>> model = torch.nn.Linear(4, 2)
    >>> opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
"""

from compat.torch.optim import lr_scheduler, swa_utils
from compat.torch.optim._swap_in import swap_in_optimizer_params_and_state
from compat.torch.optim.adadelta import Adadelta
from compat.torch.optim.adafactor import Adafactor
from compat.torch.optim.adagrad import Adagrad
from compat.torch.optim.adam import Adam, AdamW
from compat.torch.optim.adamax import Adamax
from compat.torch.optim.asgd import ASGD
from compat.torch.optim.lbfgs import LBFGS
from compat.torch.optim.muon import Muon
from compat.torch.optim.nadam import NAdam
from compat.torch.optim.optimizer import Optimizer
from compat.torch.optim.radam import RAdam
from compat.torch.optim.rmsprop import RMSprop
from compat.torch.optim.rprop import Rprop
from compat.torch.optim.sgd import SGD
from compat.torch.optim.sparse_adam import SparseAdam

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler", "swa_utils"]
# optim more: the remaining elementwise optimizers and L-BFGS
__all__ += [
    "ASGD",
    "LBFGS",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adamax",
    "Muon",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "swap_in_optimizer_params_and_state",
]
