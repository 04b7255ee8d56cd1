"""A minimal ``torchvision`` stand-in for timing PyTorch's examples without downloads.

It serves real PyTorch and compat alike (it imports whichever ``torch`` is active).
Data sets are synthetic or derived from scikit-learn's 8x8 digits; models start from
random weights whatever ``weights=`` asks for.
"""

from torchvision import datasets, models, transforms, utils

__version__ = "0.0+torch_examples_shim"
__all__ = ["datasets", "models", "transforms", "utils"]
