"""The neural systems of the CRS Arena study: KBRD, BARCOR and UniCRS, each
trained on ReDial and on OpenDialKG, run from their published checkpoints.

`neural_specs(settings)` lists them for the registry; `python -m crs download`
fetches the checkpoints (see `crs.checkpoints`). Attributes are imported on
first use so that the command line does not pay for importing torch.
"""

from importlib import import_module

_EXPORTS = {
    "neural_specs": "crs.neural.specs",
    "check_variant": "crs.neural.specs",
    "load_variant": "crs.neural.specs",
    "find_base_model": "crs.neural.specs",
    "NeuralCRS": "crs.neural.system",
    "NeuralReply": "crs.neural.system",
    "VARIANTS": "crs.neural.variants",
    "Variant": "crs.neural.variants",
    "RuntimeOptions": "crs.neural.variants",
    "CheckpointMismatch": "crs.neural.weights",
    "LoadReport": "crs.neural.weights",
    "Tolerance": "crs.neural.weights",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'crs.neural' has no attribute {name!r}")
