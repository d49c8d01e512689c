"""Other formulations of each exercise, for ``vecgrade validate`` only (students never see them).

Per exercise: ``alternatives`` (other correct vectorized answers, which must earn full marks)
and a ``half_loop`` (a loop over one large axis with vectorized work inside, which must
fail "vectorized" and "fast"). Each function is submitted under the exercise's name, so it
must be self-contained: it may use only the assignment's preamble (``torch``, ``einops``).
"""
