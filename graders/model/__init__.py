"""What an instructor writes: the exercise model, random inputs, and the notebook's cell ids."""
