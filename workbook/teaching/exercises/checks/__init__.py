"""What decides each exercise's verdict: one module per chapter, beside the chapter's exercises.

A checker takes the learner's answer and returns one sentence of praise, or raises NotYet with
the reason. Given `rng` (a random.Random), it also tries cases of its own choosing beside the
chapter's examples: the grader seeds it at grading time, so an answer that only knows the
examples in the chapter does not pass.

The class and grading editions of the package leave this package out (with the worked
answers), because a checker knows what a right answer does. The chapters' modules import it
only when a check runs.
"""
