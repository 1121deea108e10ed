"""Training on two processes on the CPU, through accelerate's own launcher: SFT then GRPO, each
process rendering (its own Chromium) and scoring its own completions, one checkpoint written by
the main process alone, which WorldModel.load runs.

accelerate 1.16 starts CPU processes only through mpirun under `--cpu`; `--multi_gpu` on a
machine without GPUs starts them with torchrun, and they train on the CPU over gloo."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from render import proctree
from training.train import CPU_LAUNCH_NOTE, Processes

RUN_TIMEOUT_S = 900
STEPS = 2  # SFT and GRPO steps: two GRPO batches per process


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pids_naming(text: str) -> list[int]:
    """Processes whose command line holds `text` (the run's output folder)."""
    mine = os.getpid()
    return [p for p in proctree.pids() if p != mine and text.encode() in b"\0".join(proctree.cmdline(p))]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mp") / "run"
    cmd = [
        sys.executable, "-m", "accelerate.commands.launch",
        "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
        "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
        "-m", "wmcli", "train", "--preset", "tiny", "--output-dir", str(out),
        "--sft-steps", str(STEPS), "--grpo-steps", str(STEPS), "--max-train-examples", "4",
        "--tiny-hidden", "64", "--tiny-layers", "1", "--tiny-vocab", "800", "--max-length", "1024",
        "--sft-batch-size", "1", "--num-generations", "2", "--max-completion-length", "24",
        "--save-steps", "1000",
    ]  # fmt: skip
    t0 = time.perf_counter()
    # its own session, so the launcher, both ranks and their Chromiums go down together
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        log, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        pytest.fail(f"two-process training ran past {RUN_TIMEOUT_S}s:\n{log[-4000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wall = time.perf_counter() - t0
    deadline = time.monotonic() + 10
    while (left := [p for p in _pids_naming(str(out)) if proctree.alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    yield out, proc.returncode, log, wall, left
    for p in left:  # a process of the run left over (the test below fails): end it
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def test_two_processes_train_and_leave_nothing_behind(run):
    out, rc, log, wall, left = run
    assert rc == 0, log[-4000:]
    assert not left, f"processes of the run still alive: {left}"
    assert "2 processes: each renders and scores its own completions" in log
    print(f"two-process run: {wall:.0f}s")


def _rank_events(out):
    got = {}
    for r in (0, 1):
        lines = [json.loads(x) for x in (out / "ranks" / f"rank{r}.jsonl").read_text().splitlines()]
        got[r] = lines
    return got


def test_each_rank_renders_and_scores_its_own_completions(run):
    out, rc, log, _, _ = run
    assert rc == 0, log[-4000:]
    events = _rank_events(out)
    pids, browsers, ids = {}, {}, {}
    for r, lines in events.items():
        assert {x["rank"] for x in lines} == {r}
        assert len({x["pid"] for x in lines}) == 1
        pids[r] = lines[0]["pid"]
        gen = [x for x in lines if x["event"] == "generated"]
        scored = [x for x in lines if x["event"] == "scored"]
        assert len(gen) == len(scored) == STEPS
        rendered = 0
        for g, s in zip(gen, scored):
            # what this process scored is what it generated, rendered by its own renderer
            assert g["step"] == s["step"] and g["ids"] == s["ids"] and len(s["ids"]) == 2
            assert s["rendered"] - rendered == len(s["ids"])
            rendered = s["rendered"]
            assert len(s["rewards"]) == len(s["ids"]) and all(len(row) == 3 for row in s["rewards"])
        browsers[r] = {p for s in scored for p in s["chromium"]}
        assert len(browsers[r]) >= 1  # a Chromium below this process
        ids[r] = [i for s in scored for i in s["ids"]]
        assert f"process {r} of 2 (pid {pids[r]}): scored {2 * STEPS} completions" in log
    assert pids[0] != pids[1] and not browsers[0] & browsers[1]
    assert ids[0] != ids[1]  # each had its own prompts' completions
    # trl's logged reward means are the means over both processes' own rows
    state = json.loads(next((out / "grpo").glob("checkpoint-*/trainer_state.json")).read_text())
    logged = [h for h in state["log_history"] if "rewards/r_sem/mean" in h]
    assert len(logged) == STEPS
    for step, h in enumerate(logged):
        rows = [
            row
            for r in (0, 1)
            for x in events[r]
            if x["event"] == "scored" and x["step"] == step
            for row in x["rewards"]
        ]
        sem = [row[0] for row in rows if row[0] is not None]
        assert abs(sum(sem) / len(sem) - h["rewards/r_sem/mean"]) < 1e-3


def test_one_checkpoint_with_its_card_that_loads_and_predicts(run, renderer):
    out, rc, log, _, _ = run
    assert rc == 0, log[-4000:]
    # the main process alone wrote: one final checkpoint (and the SFT stage's), one card each,
    # one config and figures, no half-written files, one rank log per process
    cards = sorted(str(p.relative_to(out)) for p in out.rglob("worldmodel.json"))
    assert cards == ["final/worldmodel.json", "sft/final/worldmodel.json"]
    weights = sorted(
        str(p.relative_to(out)) for p in out.rglob("model.safetensors") if "checkpoint-" not in str(p)
    )
    assert weights == ["final/model.safetensors", "init/model.safetensors", "sft/final/model.safetensors"]
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]
    assert sorted(p.name for p in (out / "ranks").iterdir()) == ["rank0.jsonl", "rank1.jsonl"]
    assert log.count("saved ") == 1 and log.count("model: ") == 1
    figures = json.loads((out / "figures.json").read_text())
    assert figures["grpo_steps"]["global_step"] == STEPS and figures["sft_loss"] > 0

    from corpus.store import iter_transitions, load_corpus
    from worldmodel import WorldModel

    t = next(iter_transitions(load_corpus()["test"].select([0])))
    with WorldModel.load(str(out / "final"), renderer=renderer, max_new_tokens=16) as wm:
        p = wm.predict(t.screen, t.action, t.goal)
    assert p.ok and p.html
    assert p.image.size == t.screen.size  # a real render of the screen's viewport


def test_a_cpu_launch_of_one_process_says_how_to_start_several(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    assert Processes.cpu_launch_alone() and "--multi_gpu --num_processes N" in CPU_LAUNCH_NOTE
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert not Processes.cpu_launch_alone()
