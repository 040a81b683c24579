#include "core/json.h"

#include <math.h>

json_t *gq_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *gq_json_num_if(double v, bool known)
{
    return known ? gq_json_num(v) : json_null();
}
