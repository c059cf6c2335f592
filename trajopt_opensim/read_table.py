"""Read a .sto/.mot file with OpenSim's Storage and TimeSeriesTable and return the numbers.

request: path (str)
result:  storage_labels, storage_time, storage_data, storage_in_degrees; table_labels, table_time,
         table_data (TimeSeriesTable through its file adapter).
"""

import numpy as np
import opensim


def run(request):
    path = str(request["path"])
    storage = opensim.Storage(path)
    labels = storage.getColumnLabels()
    rows = storage.getSize()
    columns = labels.getSize() - 1
    storage_data = np.zeros((rows, columns))
    storage_time = np.zeros(rows)
    for i in range(rows):
        vector = storage.getStateVector(i)
        storage_time[i] = vector.getTime()
        data = vector.getData()
        for j in range(columns):
            storage_data[i, j] = data.get(j)
    table = opensim.TimeSeriesTable(path)
    table_data = np.array([list(table.getDependentColumnAtIndex(j).to_numpy()) for j in range(table.getNumColumns())]).T
    return {
        "storage_labels": np.array([labels.get(i) for i in range(1, labels.getSize())]),
        "storage_time": storage_time,
        "storage_data": storage_data,
        "storage_in_degrees": bool(storage.isInDegrees()),
        "table_labels": np.array(list(table.getColumnLabels())),
        "table_time": np.array(list(table.getIndependentColumn())),
        "table_data": table_data,
        "table_in_degrees": (str(table.getTableMetaDataAsString("inDegrees"))
                             if table.hasTableMetaDataKey("inDegrees") else ""),
    }
