"""Trains the AlexNet example with PyTorch Lightning on every GPU of one machine.

WAP reads the Trainer(...) call below: devices, num_nodes and strategy are
compared with the plan for examples/pytorch/alexnet.py.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from alexnet import AlexNet


class LitAlexNet(L.LightningModule):
    def __init__(self, lr: float = 0.01):
        super().__init__()
        self.model = AlexNet(num_classes=1000)
        self.loss = nn.CrossEntropyLoss()
        self.lr = lr

    def training_step(self, batch, batch_idx):
        images, labels = batch
        loss = self.loss(self.model(images), labels)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)


def synthetic_loader(batch_size: int) -> DataLoader:
    # Random data keeps the example self-contained; swap in ImageNet for real runs.
    images = torch.randn(1024, 3, 224, 224)
    labels = torch.randint(0, 1000, (1024,))
    return DataLoader(TensorDataset(images, labels), batch_size=batch_size, num_workers=4)


if __name__ == "__main__":
    trainer = L.Trainer(
        accelerator="gpu",
        devices=8,          # one process per GPU
        num_nodes=1,
        strategy="ddp",     # replicate every layer, all-reduce every gradient
        max_epochs=1,
        precision="32-true",
    )
    # 128 per GPU process would be 1024 globally; 16 per process × 8 = the planned 128.
    trainer.fit(LitAlexNet(), synthetic_loader(batch_size=16))
