"""Trains a small Keras CNN with tf.distribute.MirroredStrategy.

WAP reads the MirroredStrategy(devices=[...]) call and compares the number of
mirrored GPUs with the plan for the model built in build_model().
"""
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


def build_model() -> keras.Model:
    return keras.Sequential([
        keras.Input(shape=(32, 32, 3)),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(128, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(4096, activation="relu"),
        layers.Dense(4096, activation="relu"),
        layers.Dense(10),
    ])


# Mirror the model over four GPUs of this machine (variables are replicated,
# gradients are all-reduced with NCCL).
strategy = tf.distribute.MirroredStrategy(devices=["/gpu:0", "/gpu:1", "/gpu:2", "/gpu:3"])

with strategy.scope():
    model = build_model()
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )

(x_train, y_train), _ = keras.datasets.cifar10.load_data()
# The global batch is split evenly over the mirrored replicas.
model.fit(x_train / 255.0, y_train, batch_size=128 * strategy.num_replicas_in_sync // 4, epochs=1)
