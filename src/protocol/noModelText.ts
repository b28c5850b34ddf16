/**
 * Where WAP looks for the model a file trains, said wherever it finds none (the CLI, the editor's picker): "no model
 * found" alone left the user to guess what WAP reads. Pure string code.
 */
export const WHERE_WAP_LOOKS =
  'WAP reads a model built at module level (`model = Net()`), by a function it can call without arguments (`main()`, ' +
  '`build_model()`), an nn.Module class it can build with its defaults, the model the `if __name__ == "__main__":` part ' +
  'trains, Keras models and TF.js layers models';
