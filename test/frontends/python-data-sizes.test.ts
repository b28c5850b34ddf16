/**
 * Sizes a script reads from its data: a vocabulary built in a loop over a file's lines, classes listed from a folder.
 * WAP does not read data, so such a size is unknown and the model says why; before, the loop was skipped, the list
 * it fills stayed empty, and the layer was built with 0 rows, a model that reads as smaller rather than unknown
 * (the word language model example, an image classifier over `os.listdir`). `len()` of an object calls its own
 * `__len__`, as Python does.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { assessCompleteness } from '../../src/core/completeness';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

before(() => initPythonFrontend());

const unknownSizes = (src: string) => {
  const r = parsePythonSource('train.py', src);
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, r.models.map((m) => m.name).join(', '));
  return model.diagnostics.filter((d) => d.code === 'unknown-size');
};

test('a vocabulary filled in a loop over a file’s lines is the data’s size, said with the loop that fills it', () => {
  const said = unknownSizes(`import torch.nn as nn
class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []
    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
    def __len__(self):
        return len(self.idx2word)
class Corpus(object):
    def __init__(self, lines):
        self.dictionary = Dictionary()
        for line in lines:
            for word in line.split():
                self.dictionary.add_word(word)
corpus = Corpus(read_lines('data/train.txt'))
model = nn.Sequential(nn.Embedding(len(corpus.dictionary), 200), nn.Linear(200, 200))
`);
  assert.equal(said.length, 1);
  assert.match(said[0]!.message, /^nn\.Embedding is built with a size WAP does not know: the loop over `lines` \(line 15\) runs on values WAP cannot know and may change it$/);
  assert.equal(assessCompleteness([], said).complete, false);
});

test('classes listed from a folder: a comprehension over the unknown is unknown, through set, sorted and len', () => {
  const said = unknownSizes(`import os
import torch.nn as nn
file_names = [f for f in os.listdir("images") if f.endswith(".jpg")]
label_to_id = {l: i for i, l in enumerate(sorted(set(file_names)))}
model = nn.Sequential(nn.Linear(512, len(label_to_id)))
`);
  assert.equal(said.length, 1);
  assert.match(said[0]!.message, /`\[f for f in os\.listdir\("images"\) if f\.endswith\("\.jpg"\)\]` runs over values WAP cannot know/);
});

test('what a loop over known values builds, and len() of a known object, are read as before', () => {
  const r = parsePythonSource('train.py', `import torch.nn as nn
class Vocab(object):
    def __init__(self, words):
        self.words = []
        for w in words:
            self.words.append(w)
    def __len__(self):
        return len(self.words)
vocab = Vocab(['a', 'b', 'c'])
sizes = [w for w in ['x', 'y']]
model = nn.Sequential(nn.Embedding(len(vocab), 8), nn.Linear(8, len(sizes)))
`);
  const model = r.models.find((m) => m.name === 'model')!;
  assert.deepEqual(model.layers.map((l) => l.attrs), [{ numEmbeddings: 3, embeddingDim: 8 }, { inFeatures: 8, outFeatures: 2, bias: true }]);
  assert.deepEqual(model.diagnostics.filter((d) => d.code === 'unknown-size'), []);
});
