"""mmicl's numeric layer: laws, quadrature, losses and minimisers, ODE flows, Monte Carlo, training,
the testbed and the store of runs; every formula it evaluates is compiled from ``mmicl.theory``.

Sub-packages: ``laws`` (task laws and the LAW language), ``runs`` (a grid of runs keyed by a hash
of its configuration, the table of run kinds, the results store), ``testbed`` (the synthetic
in-context classification testbed). ``validate`` holds every limit on an input, ``provenance``
the version, host and time that every record carries. Imports go to ``mmicl.theory`` only."""

__all__: list[str] = []
