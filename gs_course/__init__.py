"""Python on GPU: the Gray-Scott course's helper package.

The reference model (`gs_course.model`), one implementation per library behind one interface
(`gs_course.backends`), HDF5 output (`gs_course.output`) and the `gs-course` command line.
"""

__version__ = "0.1.0"
