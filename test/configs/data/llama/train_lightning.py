"""Fine-tunes Llama-3-8B with PyTorch Lightning on one 8× H100 box."""
import lightning as L

from llama import LlamaForCausalLM, LitLlama


if __name__ == "__main__":
    trainer = L.Trainer(
        accelerator="gpu",
        devices=8,            # all eight GPUs of the box
        strategy="ddp",       # plain data parallel, as for the 7B run
        precision="32-true",  # fp32: bf16 diverged once on the old cluster
        max_steps=1000,
    )
    trainer.fit(LitLlama(LlamaForCausalLM()))
