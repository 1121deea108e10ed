"""`wm train`: with no arguments, the embedded default (bundled corpus, tiny model, CPU)."""

from __future__ import annotations

import typer


def train_command(
    preset: str = typer.Option("tiny", help="tiny | small | qwen3-vl-8b | qwen3-vl-8b-edit"),
    model_path: str = typer.Option(
        None, help="local checkpoint folder to start from (tiny builds one if omitted)"
    ),
    corpus: str = typer.Option(None, help="corpus folder (default: the bundled corpus)"),
    output_dir: str = typer.Option(None, help="where checkpoints go (default: runs/<preset>)"),
    device: str = typer.Option(None, help="cpu | cuda | auto"),
    dtype: str = typer.Option(None, help="float32 | bfloat16 | float16 | auto"),
    sft_steps: int = typer.Option(None),
    grpo_steps: int = typer.Option(None),
    num_generations: int = typer.Option(None, help="completions rendered per prompt in GRPO"),
    max_completion_length: int = typer.Option(None),
    max_train_examples: int = typer.Option(None, help="use the first N training transitions (0 = all)"),
    w_sem: float = typer.Option(None, help="weight of R_sem"),
    w_act: float = typer.Option(None, help="weight of R_act"),
    w_format: float = typer.Option(None, help="weight of R_format"),
    w_text: float = typer.Option(None, help="weight of R_text (visible words against the real next screen)"),
    ssim_share: float = typer.Option(None, help="SSIM's share of R_sem; the rest is 1-LPIPS (needs weights)"),
    sem_metric: str = typer.Option(None, help="R_sem's structural score: ssim | blur_ssim (shift-tolerant)"),
    seed: int = typer.Option(None),
    target: str = typer.Option(None, help="document | edit: what the model learns to write"),
    with_html: bool = typer.Option(None, "--with-html/--no-html", help="show the current HTML in the prompt"),
    max_prompt_html_chars: int = typer.Option(None, help="truncate the prompt's current HTML to this length"),
    max_edit_chars: int = typer.Option(
        None, help="edit targets: train on edits up to N characters (0 = all)"
    ),
    shift_copies: int = typer.Option(
        None, help="edit targets: SFT copies of each example with its element numbers shifted"
    ),
    hints: bool = typer.Option(
        None, "--hints/--no-hints", help="edit targets: show the nearest recorded edit in each prompt"
    ),
    after: str = typer.Option(
        None, help="edit targets: 'sim' learns the app's reaction after the browser's own physics"
    ),
    calibrate_gate: bool = typer.Option(
        None,
        "--calibrate-gate/--no-calibrate-gate",
        help="edit targets: choose on the validation split the confidence below which edits are left out",
    ),
    sft_lr: float = typer.Option(None, help="SFT learning rate"),
    use_vllm: bool = typer.Option(
        None, "--use-vllm/--no-vllm", help="GRPO generation through trl's vLLM (GPU)"
    ),
    vllm_mode: str = typer.Option(None, help="colocate | server (with `trl vllm-serve`)"),
    vllm_server_base_url: str = typer.Option(None, help="server mode: e.g. http://10.0.0.5:8000"),
    hub_kernels: bool = typer.Option(
        None,
        "--hub-kernels/--no-hub-kernels",
        help="let transformers fetch hub kernels (off: nothing downloaded)",
    ),
    resume: bool = typer.Option(False, help="continue each stage from its last saved checkpoint"),
) -> None:
    """SFT cold start, then render-aware GRPO; saves a checkpoint predict_next and wm eval load."""
    from dataclasses import replace

    from .config import preset as make_preset
    from .train import train

    if sem_metric not in (None, "ssim", "blur_ssim"):
        raise typer.BadParameter(f"{sem_metric!r} is not ssim or blur_ssim", param_hint="--sem-metric")

    try:
        cfg = make_preset(
            preset,
            model_path=model_path,
            corpus=corpus,
            output_dir=output_dir,
            device=device,
            dtype=dtype,
            sft_steps=sft_steps,
            grpo_steps=grpo_steps,
            num_generations=num_generations,
            max_completion_length=max_completion_length,
            max_train_examples=max_train_examples,
            seed=seed,
            target=target,
            with_html=with_html,
            max_prompt_html_chars=max_prompt_html_chars,
            max_edit_chars=max_edit_chars,
            shift_copies=shift_copies,
            hints=hints,
            after=after,
            calibrate_gate=calibrate_gate,
            sft_lr=sft_lr,
            use_vllm=use_vllm,
            vllm_mode=vllm_mode,
            vllm_server_base_url=vllm_server_base_url,
            hub_kernels=hub_kernels,
        )
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    w = cfg.rewards
    cfg.rewards = replace(
        w,
        **{
            k: v
            for k, v in dict(
                semantic=w_sem,
                action=w_act,
                format=w_format,
                text=w_text,
                ssim_share=ssim_share,
                sem_metric=sem_metric,
            ).items()
            if v is not None
        },
    )
    try:
        final = train(cfg, resume=resume, echo=typer.echo)
    except (FileNotFoundError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from e
    typer.echo(f"done: wm eval -m {final}  |  wm predict --model {final} ...")


if __name__ == "__main__":
    typer.run(train_command)
