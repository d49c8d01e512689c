"""Other formulations of each exercise, for ``vecgrade validate`` only (students never see them).

Per exercise: ``alternatives`` (other correct vectorized answers, which must earn full marks)
and ``half_loops``: one per axis of the inputs that grows with the exercise's size argument
(``sized(gen, n)``), each a loop over that axis with vectorized work inside, which must fail
"vectorized" and "fast". A half loop is named after the axis it loops over
(``<exercise>_half_loop_<axis>``). Each function is submitted under the exercise's name, so it
must be self-contained: it may use only the assignment's preamble (``torch``, ``einops``).
"""
