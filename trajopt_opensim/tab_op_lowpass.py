"""A table low-pass filtered by OpenSim's own ``TabOpLowPassFilter`` (the operator Moco's ``TableProcessor`` applies).

request: path (str), cutoff_frequency (float, Hz)
result:  labels, time, data (rows x columns) of ``TableProcessor(path) | TabOpLowPassFilter(cutoff)`` processed
         without a model (values as the file stores them).
"""

import numpy as np
import opensim


def run(request):
    processor = opensim.TableProcessor(str(request["path"]))
    processor.append(opensim.TabOpLowPassFilter(float(request["cutoff_frequency"])))
    table = processor.process()
    return {"labels": np.array(list(table.getColumnLabels()), dtype=str),
            "time": np.array(list(table.getIndependentColumn())),
            "data": np.asarray(table.getMatrix().to_numpy())}
