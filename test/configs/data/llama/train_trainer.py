"""Supervised fine-tuning of Llama-3-8B with the Hugging Face Trainer on one 8× H100 box."""
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

from data import load_sft_dataset


def main():
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Meta-Llama-3-8B")
    args = TrainingArguments(
        output_dir="checkpoints/llama3-sft",
        per_device_train_batch_size=16,  # what fit on the A100s
        gradient_accumulation_steps=2,
        learning_rate=2e-5,
        num_train_epochs=3,
        # fp32: no bf16 flag, as on the old cluster
        logging_steps=10,
    )
    Trainer(model=model, args=args, train_dataset=load_sft_dataset()).train()


if __name__ == "__main__":
    main()
