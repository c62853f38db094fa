"""The six neural systems of the CRS Arena study and their settings.

Values are those of CRS Arena's per-system configurations (context and
response lengths, entity window, KBRD and R-GCN sizes, base models).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from arena.runtime.config import Settings

FAMILIES = ("kbrd", "barcor", "unicrs")
DATASETS = ("redial", "opendialkg")

BART_BASE = "facebook/bart-base"
DIALOGPT_SMALL = "microsoft/DialoGPT-small"
ROBERTA_BASE = "FacebookAI/roberta-base"


@dataclass(frozen=True)
class Variant:
    name: str
    family: str
    dataset: str
    context_max_length: int
    resp_max_length: int
    entity_max_length: Optional[int] = None
    tokenizer: str = BART_BASE
    # KBRD
    hidden_size: int = 128
    entity_hidden_size: int = 128
    num_bases: int = 8
    # UniCRS
    model: Optional[str] = None
    text_encoder: Optional[str] = None

    @property
    def rec_folder(self) -> str:
        return f"{self.family}_rec_{self.dataset}"

    @property
    def conv_folder(self) -> str:
        return f"{self.family}_conv_{self.dataset}"

    @property
    def folders(self) -> tuple[str, str]:
        return self.rec_folder, self.conv_folder

    @property
    def base_models(self) -> tuple[str, ...]:
        """Hugging Face base models needed besides the checkpoint folders."""
        if self.family == "unicrs":
            return (self.model, self.text_encoder)
        return (self.tokenizer,)

    @property
    def description(self) -> str:
        what = {
            "kbrd": "KBRD: R-GCN entity recommender with a small BART generator biased by the user profile",
            "barcor": "BARCOR: BART entity classifier for recommendation and BART generator",
            "unicrs": "UniCRS: DialoGPT with knowledge-enhanced prompts from an R-GCN and RoBERTa",
        }[self.family]
        return f"{what}; trained on {self.dataset_label}."

    @property
    def dataset_label(self) -> str:
        return "ReDial" if self.dataset == "redial" else "OpenDialKG"

    @property
    def display_name(self) -> str:
        family = {"kbrd": "KBRD", "barcor": "BARCOR", "unicrs": "UniCRS"}[self.family]
        return f"{family} ({self.dataset_label})"

    @property
    def summary(self) -> str:
        """One line in plain words, for participants (`description` is the researchers' version)."""
        what = {
            "kbrd": "Picks movies from a knowledge graph of films and people and writes its replies with a small "
                    "language model",
            "barcor": "One language model (BART) both picks the movie and writes the reply",
            "unicrs": "A dialogue language model (DialoGPT) guided by what a knowledge graph knows about the "
                      "movies you mention",
        }[self.family]
        return f"{what}; it learned from the {self.dataset_label} conversations about movies."


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("kbrd_redial", "kbrd", "redial", 200, 128, 32),
        Variant("kbrd_opendialkg", "kbrd", "opendialkg", 200, 128, 32),
        Variant("barcor_redial", "barcor", "redial", 200, 128),
        Variant("barcor_opendialkg", "barcor", "opendialkg", 200, 128),
        Variant(
            "unicrs_redial", "unicrs", "redial", 128, 128, 43,
            tokenizer=DIALOGPT_SMALL, model=DIALOGPT_SMALL, text_encoder=ROBERTA_BASE,
        ),
        Variant(
            "unicrs_opendialkg", "unicrs", "opendialkg", 128, 64, 20,
            tokenizer=DIALOGPT_SMALL, model=DIALOGPT_SMALL, text_encoder=ROBERTA_BASE,
        ),
    )
}


# Replies are cut after this many tokens unless configured otherwise: the
# originals allowed 128 (64 for UniCRS on OpenDialKG), but only about 0.5% of
# the human replies the models imitate are longer than 64 tokens.
DEFAULT_MAX_NEW_TOKENS = 64

# Torch threads per turn. On a small shared CPU one thread is the robust choice:
# with two, every parallel region waits whenever another process holds a core,
# and small operations become many times slower (see BENCHMARKS.md, "Neural systems").
DEFAULT_THREADS = 1

# Families quantized unless told otherwise: their token-by-token decoding reads
# ~0.5 GB of fp32 weights per token. KBRD is small enough to stay exact.
QUANTIZED_BY_DEFAULT = ("barcor", "unicrs")


# ARENA_NEURAL_MODE: `arena` keeps the project's choices (README, "Neural systems: arena vs
# reference mode"); `reference` reproduces the inputs and outputs of the code CRS Arena ran.
MODES = ("arena", "reference")


@dataclass(frozen=True)
class RuntimeOptions:
    """Inference knobs, from the settings:
    ARENA_NEURAL_THREADS (torch threads per turn, default 1; 0 = torch's default),
    ARENA_NEURAL_MAX_NEW_TOKENS (reply length bound, default 64; 0 = the originals' bounds),
    ARENA_NEURAL_QUANTIZE: auto (default: BARCOR and UniCRS), 1 (all), 0 (none, exact fp32),
    ARENA_NEURAL_MODE: arena (default) or reference, which overrides the two before it and
    the GPU's 16-bit arithmetic: fp32 everywhere, the originals' reply bounds."""

    threads: Optional[int] = DEFAULT_THREADS
    max_new_tokens: Optional[int] = DEFAULT_MAX_NEW_TOKENS  # None: the originals' bounds
    quantize: Optional[bool] = None  # None = auto
    device: Optional[str] = None  # "cpu" or "cuda"; None: Settings.device (ARENA_DEVICE) decides at load
    mode: str = "arena"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"neural mode must be one of {MODES}, got {self.mode!r}")

    @property
    def reference(self) -> bool:
        return self.mode == "reference"

    @property
    def half_precision(self) -> bool:
        """16-bit arithmetic on a GPU; the reference ran fp32."""
        return not self.reference

    def quantizes(self, family: str) -> bool:
        if self.reference:
            return False  # the reference ran the fp32 weights
        if self.device not in (None, "cpu"):
            return False  # int8 dynamic quantization is a CPU kernel; GPUs run 16-bit instead
        return family in QUANTIZED_BY_DEFAULT if self.quantize is None else self.quantize

    @classmethod
    def from_settings(cls, settings: "Settings") -> "RuntimeOptions":
        """From the settings ARENA_NEURAL_THREADS, _MAX_NEW_TOKENS, _QUANTIZE and _MODE."""
        quantize = {"auto": None, "1": True, "0": False}[settings.neural_quantize]
        return cls(settings.neural_threads or None, settings.neural_max_new_tokens or None, quantize,
                   mode=settings.neural_mode)

    def response_limit(self, original: int) -> int:
        if self.reference:
            return original
        return min(original, self.max_new_tokens) if self.max_new_tokens else original
