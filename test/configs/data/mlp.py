import torch
from torch import nn


class WideMLP(nn.Module):
    """Big fully connected layers: all-reduce heavy under data parallelism."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8192, 8192)
        self.fc2 = nn.Linear(8192, 8192)
        self.fc3 = nn.Linear(8192, 1000)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)
