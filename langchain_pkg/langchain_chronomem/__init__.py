"""Package under construction; see the package README."""
