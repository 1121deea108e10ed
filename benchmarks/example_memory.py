"""What `wm train`'s training examples hold in memory: the images their prompts show.

    python benchmarks/example_memory.py [--corpus PATH] [--preset small]

Builds the preset's training examples of the corpus' train split (as `wm train` does, Chromium
and all) and prints how many examples, how many distinct images they hold, the images' raw
size, the size one image per example would take (the baseline, counted in the same run), the
ratio, the process' peak resident memory and the time taken. A transition's examples (its typing
and shifted copies, its hint-less copy) share one image, so the ratio is the examples per
transition.
"""

from __future__ import annotations

import argparse
import resource
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=None, help="a corpus folder (default: the bundled corpus)")
    ap.add_argument("--preset", default="small")
    args = ap.parse_args()

    from corpus.store import load_corpus
    from training.config import preset
    from training.train import training_examples

    start = time.perf_counter()
    examples = training_examples(preset(args.preset), load_corpus(args.corpus)["train"])
    took = time.perf_counter() - start

    def raw_mb(images) -> float:
        return sum(i.size[0] * i.size[1] * len(i.getbands()) for i in images) / 2**20

    distinct = {id(e["images"][0]): e["images"][0] for e in examples}
    held, each = raw_mb(distinct.values()), raw_mb(e["images"][0] for e in examples)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{len(examples)} examples, {len(distinct)} distinct images")
    print(f"images held: {held:.0f} MB raw; one per example would be {each:.0f} MB ({each / held:.2f}x)")
    print(f"peak RSS {peak:.2f} GB, {took:.0f} s to build")


if __name__ == "__main__":
    main()
