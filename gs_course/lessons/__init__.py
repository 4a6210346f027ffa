"""What the tutorials teach with: the exercises' checkers and their framework, the tutorial-only
code (tutorial 4's analysis, the CuPy kernel variants, the cuda.core route), the views, and the
tooling that makes the student notebooks from the solved ones. It imports the engine and
measurement, nothing above."""
