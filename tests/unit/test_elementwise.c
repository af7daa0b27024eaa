/* Placeholder: tests of this family are being written. */
#include "array_check.h"

int main(void)
{
    CHECK_DONE();
}
